# model_glob tests
