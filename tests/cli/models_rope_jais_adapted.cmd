models
inceptionai/jais-adapted-7b
