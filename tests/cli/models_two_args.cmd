models
bloom
falcon
