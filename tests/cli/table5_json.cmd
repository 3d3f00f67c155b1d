table
5
--format
json
