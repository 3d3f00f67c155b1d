check
--model
replit-code-v1-3b
--ctx
2048
