figure
1a
--format
csv
