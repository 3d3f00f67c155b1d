models
falcon-40b
