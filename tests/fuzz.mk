# fuzz tests
