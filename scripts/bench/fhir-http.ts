export async function run(): Promise<void> {
  console.log("(not written yet)");
}
