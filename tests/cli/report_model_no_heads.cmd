report
--model
phogpt-7b5
--output
r.html
