table
8
--format
csv
