table
8
--rn
