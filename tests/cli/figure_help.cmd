figure
--help
