import java.net.URI;
import java.net.http.*;

public class Ask {
    public static void main(String[] a) throws Exception {
        String body = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"" + a[0].replace("\"", "'") + "\"}]}";
        HttpRequest r = HttpRequest.newBuilder(URI.create("https://api.openai.com/v1/chat/completions"))
            .header("Authorization", "Bearer " + System.getenv("OPENAI_API_KEY"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        System.out.println(HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString()).body());
    }
}
