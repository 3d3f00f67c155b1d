analyze
--ctxx
2048
