table
1
--ieee
