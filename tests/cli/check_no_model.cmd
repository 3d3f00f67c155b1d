check
--ctx
2048
