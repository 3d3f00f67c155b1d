figure
1b
--format
csv
