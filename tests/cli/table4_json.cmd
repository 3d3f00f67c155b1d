table
4
--format
json
