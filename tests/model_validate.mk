# model_validate tests
