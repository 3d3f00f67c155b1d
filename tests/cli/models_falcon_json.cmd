models
--format
json
falcon-rw-7b
