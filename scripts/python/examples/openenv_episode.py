# One ehrgym episode through OpenEnv's client (/ws: one episode per connection, deleted when it
# closes). EHRGYM_URL: a running `ehrgym serve`; TASK_ID and TURNS (a JSON list of turn texts).
import json
import os

from ehrgym.openenv import EhrGymAction, EhrGymEnvClient

url = os.environ.get("EHRGYM_URL", "http://127.0.0.1:8000")
with EhrGymEnvClient(url).sync() as env:
    result = env.reset(task_id=os.environ["TASK_ID"])
    print(result.observation.messages[-1]["content"][:200])
    for turn in json.loads(os.environ["TURNS"]):
        result = env.step(EhrGymAction(content=turn))
        if result.done:
            break
    print(json.dumps({"reward": result.reward, "done": result.done, "status": result.observation.info["status"]}))
