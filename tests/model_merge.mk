# model_merge tests
