simulate
--model
falcon-rw-1b
--pipeline
falcon-hf-eager,version=44272086
--predict
