reproduce
--differences
--format
csv
