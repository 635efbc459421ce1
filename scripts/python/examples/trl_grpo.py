# GRPO with TRL on ehrgym episodes: the server's tools become the policy's tools, its reward the
# training signal. EHRGYM_URL: a running `ehrgym serve`.
import os

from trl import GRPOConfig, GRPOTrainer

from ehrgym.trl import environment, prompt_dataset, score_reward

url = os.environ.get("EHRGYM_URL", "http://127.0.0.1:8000")


def train(model, tokenizer, args: GRPOConfig, suite: str = "mab-v2") -> GRPOTrainer:
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=prompt_dataset(url, suite=suite),  # prompt + task_id per task
        environment_factory=environment(url),  # reset(task_id) opens an episode; get_reward() closes it
        reward_funcs=[score_reward(url)],  # optional: /v1/score of each whole transcript
    )
    trainer.train()
    return trainer


if __name__ == "__main__":
    from transformers import AutoModelForCausalLM, AutoTokenizer

    name = os.environ.get("MODEL", "Qwen/Qwen3-0.6B")
    model, tokenizer = AutoModelForCausalLM.from_pretrained(name), AutoTokenizer.from_pretrained(name)
    train(model, tokenizer, GRPOConfig(output_dir="runs/grpo", max_completion_length=1024, num_generations=8))
