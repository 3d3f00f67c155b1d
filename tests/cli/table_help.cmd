table
--help
