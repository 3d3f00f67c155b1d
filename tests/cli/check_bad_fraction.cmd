check
--model
bloom
--max-row-fraction
1.5
