table
4
--digits
10
--rn
