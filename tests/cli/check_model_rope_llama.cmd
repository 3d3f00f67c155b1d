check
--model
meta-llama/Llama-2-7b-hf
