table
8
--format
markdown
