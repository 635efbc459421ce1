# GRPO with TRL on ehrgym episodes: the server's tools become the policy's tools, its reward the
# training signal. EHRGYM_URL: a running `ehrgym serve`.
import os

from trl import GRPOConfig, GRPOTrainer

from ehrgym.trl import environment, prompt_dataset, score_reward

url = os.environ.get("EHRGYM_URL", "http://127.0.0.1:8000")


# A curriculum (optional): GRPO learns nothing from a task whose samples all get the same reward, so
# train on the tasks the policy sometimes solves. EHRGYM_TASKS: the file `ehrgym tasks select` wrote:
#   ehrgym tasks generate --suite mab-v2 --out train.jsonl
#   ehrgym eval --policy openai --model M --tasks train.jsonl --samples 8 --temperature 1 --protocol tools --out eval.jsonl
#   ehrgym tasks select --from eval.jsonl --pass-rate 0.1:0.9 --out curriculum.jsonl
#   ehrgym serve --tasks curriculum.jsonl
tasks = os.environ.get("EHRGYM_TASKS")


def train(model, tokenizer, args: GRPOConfig, suite: str = "mab-v2", tasks: str | None = tasks) -> GRPOTrainer:
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=prompt_dataset(url, suite=suite, tasks=tasks),  # prompt + task_id per task (of the curriculum, when given)
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
