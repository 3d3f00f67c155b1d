table
8
--convention
ieee
