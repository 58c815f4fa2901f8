# model_eval tests
