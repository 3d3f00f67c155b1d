simulate
--model
falcon-rw-1b
--pipeline
falcon-hf-eager
--predict
