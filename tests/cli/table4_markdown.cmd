table
4
--format
markdown
