table
1
--format
json
