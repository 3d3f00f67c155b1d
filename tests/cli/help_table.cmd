help
table
