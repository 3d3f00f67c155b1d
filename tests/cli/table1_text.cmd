table
1
--format
text
