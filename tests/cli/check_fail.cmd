check
--model
falcon-rw-7b
