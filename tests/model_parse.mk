# model_parse tests
