table
1
--format
csv
