check
--model
falcon-rw-7b
--max-blind-heads
64
--max-row-fraction
0.05
