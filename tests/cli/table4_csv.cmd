table
4
--format
csv
