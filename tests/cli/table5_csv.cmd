table
5
--format
csv
