# bench tests
