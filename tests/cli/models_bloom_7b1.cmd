models
bloom-7b1
