models
bloom-7b
