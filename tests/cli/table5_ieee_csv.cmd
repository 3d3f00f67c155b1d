table
5
--ieee
--convention
ieee
--format
csv
