table
1
--digits
3
