table
4
--rn
--dtype
all
--format
csv
