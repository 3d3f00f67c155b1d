table
3
