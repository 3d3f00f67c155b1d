table
8
--format
json
