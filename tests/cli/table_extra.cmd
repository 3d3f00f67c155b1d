table
8
9
