analyze
--model
falcon-rw-7b
